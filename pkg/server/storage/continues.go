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
	"sync/atomic"

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
	before *atomic.Int64
}

func (s expiringContinues) GetList(ctx context.Context, key string, opts apistorage.ListOptions, listObj runtime.Object) error {
	if before := s.before.Load(); before > 0 && opts.Predicate.Continue != "" {
		// The token's key relative to "/": only its revision is read here,
		// and the fresh token keeps its key. A token that does not decode
		// is the store's to answer.
		if from, rv, err := apistorage.DecodeContinue(opts.Predicate.Continue, "/"); err == nil && rv > 0 && rv < before {
			return expiredContinue(from)
		}
	}
	return s.Interface.GetList(ctx, key, opts, listObj)
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
func expiredContinue(from string) error {
	err := apierrors.NewResourceExpired(inconsistentContinue)
	if fresh, encErr := apistorage.EncodeContinue(from, "/", -1); encErr == nil {
		err.ErrStatus.ListMeta.Continue = fresh
	}
	return err
}
