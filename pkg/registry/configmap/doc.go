// Package configmap serves core/v1 configmaps.
package configmap
