// Package endpoints serves core/v1 endpoints.
package endpoints
