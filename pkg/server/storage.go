package server

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// withWatchCache is the storage decorator of --watch-cache: each resource's
// etcd3 store wrapped in a watchcache.Cache, which follows the store until
// the registry destroys it. Writes go through the cache to etcd; reads and
// watches are served as pkg/watchcache describes.
func withWatchCache(o *Options) generic.StorageDecorator {
	return func(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrsFunc apistorage.AttrFunc, triggers apistorage.IndexerFuncs, _ *cache.Indexers,
	) (apistorage.Interface, factory.DestroyFunc, error) {
		s, destroy, err := generic.NewRawStorage(config, newFunc, newListFunc, resourcePrefix)
		if err != nil {
			return nil, nil, err
		}
		c, err := watchcache.New(watchcache.Config{
			Storage:          s,
			ResourcePrefix:   resourcePrefix,
			NewFunc:          newFunc,
			NewListFunc:      newListFunc,
			KeyFunc:          keyFunc,
			GetAttrsFunc:     getAttrsFunc,
			GroupResource:    config.GroupResource,
			IndexFields:      slices.Sorted(maps.Keys(triggers)),
			HistoryWindow:    o.WatchCacheHistoryWindow,
			MaxEvents:        o.WatchCacheHistorySize,
			ProgressNotify:   features.Enabled(features.EfficientWatchResumption),
			WatchInitialized: utilflowcontrol.WatchInitialized,
			Snapshots:        features.Enabled(features.PaginationFromCache),
		})
		if err != nil {
			destroy()
			return nil, nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Run(ctx)
		}()
		return storage.WithChunkingGate(c), func() {
			cancel()
			<-done
			destroy()
		}, nil
	}
}

// The k8s.io/apiserver gates our gates stand for. WatchList lets requests
// carry sendInitialEvents: it follows ConsistentWatchList, so that with our
// gate off a watch-list request is refused (422) as by a server without the
// feature, and plain watches are not turned into watch-lists.
// ListFromCacheSnapshot makes the etcd3 store watch etcd's compaction key,
// so it (and the cache, which drops its snapshots below the compaction
// revision) sees compactions made by other instances; it follows
// PaginationFromCache.
const (
	upstreamWatchList             = "WatchList"
	upstreamListFromCacheSnapshot = "ListFromCacheSnapshot"
)

func syncUpstreamGates() error {
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		upstreamWatchList:             features.Enabled(features.ConsistentWatchList),
		upstreamListFromCacheSnapshot: features.Enabled(features.PaginationFromCache),
	})
}
