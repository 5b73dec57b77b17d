/*
Copyright The miniapiserver Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package registry

import (
	"context"

	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// WithDeclarative is what upstream's generic store makes of a write's
// handwritten errors and the errors of the declarative rules of its type
// (beta, enforced by default in 1.37): a handwritten error marked covered
// by declarative validation gives way to the declarative error that
// matches it, and the declarative errors come last.
func WithDeclarative(handwritten, declarative field.ErrorList) field.ErrorList {
	declarative = declarative.MarkBeta()
	errs := validate.FilterCoveredHandwrittenErrors(context.Background(), handwritten, declarative, true)
	return append(errs, declarative...)
}
