// Package namespace serves core/v1 namespaces with their status and finalize
// subresources. Deleting a namespace marks it Terminating; the namespace
// controller (pkg/server) empties it and finalizes it, which removes it.
package namespace
