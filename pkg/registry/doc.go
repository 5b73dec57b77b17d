// Package registry holds what every served resource shares: a strategy built
// from per-type hooks, table printing, and the generic etcd-backed store.
// Each resource lives in its own sub-package.
package registry
