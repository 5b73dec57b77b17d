// Package persistentvolume serves core/v1 persistentvolumes and their status subresource.
package persistentvolume
