// Package secret serves core/v1 secrets.
package secret
