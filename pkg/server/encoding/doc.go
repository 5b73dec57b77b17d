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

// Package encoding writes LIST responses and the initial events of watches
// from the encodings the watch cache keeps with each cached object, byte
// for byte as upstream's encoders write them, instead of encoding the same
// unchanging object again for every request. It is the one seam between
// the cache and the HTTP layer, and it goes one way (pkg/server → encoding
// → pkg/watchcache): the cache keeps the bytes an Encoder it is given makes
// on an object's first use, knowing no wire format, and hands them out
// only through watchcache.Encodings (Items, for a list it filled; the
// EventWriter, for an initial watch event); this package gives it the
// Encoders and writes from their bytes: WithCachedListEncoding's list
// serializers for the built-in groups (listencoding.go), EventWriter for
// watch events (watchencoding.go) and CustomResourceLists for the LISTs of
// custom resources, in front of apiextensions-apiserver
// (customresourcelists.go). Whatever it does not recognise is encoded as
// usual. pkg/server hands it the Encodings of its storages
// (pkg/server/storage) and puts its serializers in the API groups.
package encoding
