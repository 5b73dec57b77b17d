// Package node serves core/v1 nodes and their status subresource.
package node
