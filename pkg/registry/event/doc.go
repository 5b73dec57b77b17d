// Package event serves core/v1 events.
package event
