// Package persistentvolumeclaim serves core/v1 persistentvolumeclaims and their status subresource.
package persistentvolumeclaim
