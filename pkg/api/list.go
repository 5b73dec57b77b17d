package api

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

func eachItem(list runtime.Object, fn func(runtime.Object)) error {
	return meta.EachListItem(list, func(o runtime.Object) error {
		fn(o)
		return nil
	})
}
