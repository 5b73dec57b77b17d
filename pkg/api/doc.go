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

// Package api holds the scheme of the served types: every served group's
// kinds (the list in scheme.go) registered as both their external and
// their internal version (the same Go types, so no conversions exist),
// their defaults, their field-label conversions, and the options of the
// pod subresources decoded from query parameters.
package api
