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

package storage

import (
	"context"
	"encoding/base64"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	apistorage "k8s.io/apiserver/pkg/storage"
)

// ExpireContinues makes every continue token of a revision before rev
// answer 410, as after a compaction to rev: the test controls' restore
// calls it with its last revision, since a page from before (or during) a
// restore would mix with pages after it.
func (s *Storages) ExpireContinues(rev int64) {
	for {
		old := s.continuesBefore.Load()
		if rev <= old || s.continuesBefore.CompareAndSwap(old, rev) {
			return
		}
	}
}

// expiringContinues is a storage whose LISTs with a continue token older
// than before's revision answer as upstream's etcd3 store answers one
// older than a compaction: 410, with a token that continues from the same
// key at the latest revision.
type expiringContinues struct {
	apistorage.Interface
	before interface{ Load() int64 }
}

func (s expiringContinues) GetList(ctx context.Context, key string, opts apistorage.ListOptions, listObj runtime.Object) error {
	if before := s.before.Load(); before > 0 && opts.Predicate.Continue != "" {
		if token, ok := decodeContinue(opts.Predicate.Continue); ok && token.ResourceVersion > 0 && token.ResourceVersion < before {
			return expiredContinue(token)
		}
	}
	return s.Interface.GetList(ctx, key, opts, listObj)
}

// continueToken is k8s.io/apiserver's (storage.EncodeContinue's).
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// decodeContinue reads a token; one it cannot read is left to the store,
// which answers it as upstream does.
func decodeContinue(value string) (continueToken, bool) {
	data, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return continueToken{}, false
	}
	var t continueToken
	if json.Unmarshal(data, &t) != nil || t.APIVersion != "meta.k8s.io/v1" {
		return continueToken{}, false
	}
	return t, true
}

// inconsistentContinue is upstream's message (etcd3's errors.go).
const inconsistentContinue = "The provided continue parameter is too old " +
	"to display a consistent list result. You can start a new list without " +
	"the continue parameter, or use the continue token in this response to " +
	"retrieve the remainder of the results. Continuing with the provided " +
	"token results in an inconsistent list - objects that were created, " +
	"modified, or deleted between the time the first chunk was returned " +
	"and now may show up in the list."

// expiredContinue is the 410 of an expired token, with a token from the
// same key at the latest revision (rv -1, as etcd3's
// handleCompactedErrorForPaging makes it).
func expiredContinue(t continueToken) error {
	t.ResourceVersion = -1
	data, _ := json.Marshal(t)
	err := apierrors.NewResourceExpired(inconsistentContinue)
	err.ErrStatus.ListMeta.Continue = base64.RawURLEncoding.EncodeToString(data)
	return err
}
