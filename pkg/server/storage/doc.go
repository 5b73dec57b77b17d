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

// Package storage is miniapiserver's storage factory, as
// k8s.io/apiserver/pkg/server/storage is upstream's. Storages.Decorator, the
// generic.StorageDecorator that pkg/storage's RESTOptionsGetter gives every
// resource, builds the resource's storage: upstream's etcd3 store; with
// --watch-cache, inside a watchcache.Cache, whose kept encodings
// (Storages.Encodings) pkg/server's serializers write from; with
// APIListChunking off, behind a filter that drops limit and continue. It is
// where the storage gates take effect, and where pkg/storage and
// pkg/watchcache meet without importing each other (it imports the second
// only). It keeps track of the caches and of the watches etcd serves, so
// that Storages.Shutdown ends them all at once when the server stops.
package storage
