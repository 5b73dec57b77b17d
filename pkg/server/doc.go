// Package server assembles miniapiserver: Options -> Config -> Complete -> New
// builds the generic API server, its etcd, its storage and its API groups.
package server
