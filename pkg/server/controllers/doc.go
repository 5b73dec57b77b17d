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

// Package controllers builds the controllers miniapiserver runs in the
// server, by kube-controller-manager's names (names.go, which
// Options.Controllers and --controllers take): List makes those a list
// enables, each from pkg/controller/... or pkg/garbagecollector, on the
// server's loopback client and shared informers (controllers.go); and it
// holds the loop that repairs the record of node ports (repair.go).
// pkg/server starts each with a post-start hook of its name; this package
// does not import pkg/server.
package controllers
