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

package admissionregistration

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The CEL compilers upstream's validation uses: one stateless compiler for
// match conditions (and policies without variables), and a composited one,
// stateful, made per policy when its expressions may refer to variables.

var statelessCompiler = sync.OnceValue(func() plugincel.Compiler {
	return plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
})

// newCompiler is upstream's createCompiler.
func newCompiler(allowComposition bool) plugincel.Compiler {
	if !allowComposition {
		return statelessCompiler()
	}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		// Should never happen; as upstream, fall back to a stateless compiler.
		utilruntime.HandleError(err)
		return plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	}
	return compiler
}

// compile compiles expression and reports a failure at path, as upstream's
// validateCELCondition.
func compile(compiler plugincel.Compiler, expression plugincel.ExpressionAccessor, vars plugincel.OptionalVariableDeclarations, envType environment.Type, path *field.Path) field.ErrorList {
	result := compiler.CompileCELExpression(expression, vars, envType)
	if result.Error != nil {
		return field.ErrorList{celError(path, expression, result.Error)}
	}
	return nil
}

// celError is upstream's convertCELErrorToValidationError: a compilation
// failure is an Invalid value whose detail starts "compilation failed: ",
// a wrong result type one that says what it must evaluate to.
func celError(path *field.Path, expression plugincel.ExpressionAccessor, err error) *field.Error {
	var celErr *cel.Error
	if errors.As(err, &celErr) {
		switch celErr.Type {
		case cel.ErrorTypeRequired:
			return field.Required(path, celErr.Detail)
		case cel.ErrorTypeInvalid:
			return field.Invalid(path, expression.GetExpression(), celErr.Detail)
		case cel.ErrorTypeInternal:
			return field.InternalError(path, celErr)
		}
	}
	return field.InternalError(path, fmt.Errorf("unsupported error type: %w", err))
}

// envType is the environment an expression compiles in: a new expression
// only with what this version offers; one already stored (an update that
// keeps it) with everything a later version may have let it use.
func envType(stored sets.Set[string], expression string) environment.Type {
	if stored.Has(expression) {
		return environment.StoredExpressions
	}
	return environment.NewExpressions
}

var (
	celIdentifier = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved   = []string{"true", "false", "null", "in", "as", "break", "const", "continue", "else",
		"for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}
)

// isCELIdentifier reports whether name may name a CEL variable (IDENT, not RESERVED).
func isCELIdentifier(name string) bool {
	return celIdentifier.MatchString(name) && !slices.Contains(celReserved, name)
}
