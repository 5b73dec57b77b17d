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

package dra

import (
	"errors"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// validateCELExpression is upstream's validateCELExpression of a new
// selector's expression: at most CELSelectorExpressionMaxLength long, then
// compiled by k8s.io/dynamic-resource-allocation's compiler (consumable
// capacity on and list-typed attributes off, as 1.37's defaults) within
// the cost limit.
func validateCELExpression(expression string, path *field.Path) field.ErrorList {
	if len(expression) > resourcev1.CELSelectorExpressionMaxLength {
		return field.ErrorList{field.TooLong(path, "", resourcev1.CELSelectorExpressionMaxLength)}
	}
	envType := environment.NewExpressions
	result := dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true}).CompileCELExpression(expression, dracel.Options{EnvType: &envType})
	switch {
	case result.Error != nil:
		return field.ErrorList{celError(path, expression, result.Error)}
	case result.MaxCost > resourcev1.CELSelectorExpressionMaxCost:
		return field.ErrorList{field.Forbidden(path, "too complex, exceeds cost limit")}
	}
	return nil
}

// celError is upstream's convertCELErrorToValidationError.
func celError(path *field.Path, expression string, err error) *field.Error {
	var celErr *apiservercel.Error
	if errors.As(err, &celErr) {
		switch celErr.Type {
		case apiservercel.ErrorTypeRequired:
			return field.Required(path, celErr.Detail)
		case apiservercel.ErrorTypeInvalid:
			return field.Invalid(path, expression, celErr.Detail)
		case apiservercel.ErrorTypeInternal:
			return field.InternalError(path, celErr)
		}
	}
	return field.InternalError(path, fmt.Errorf("unsupported error type: %w", err))
}
