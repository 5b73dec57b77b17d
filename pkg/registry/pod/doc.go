// Package pod serves core/v1 pods and their status subresource. There is no
// kubelet: pods stay Pending unless a client writes their status, and are
// deleted at once (as upstream deletes pods no node has been assigned).
package pod
