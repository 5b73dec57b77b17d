// Package serviceaccount serves core/v1 serviceaccounts.
package serviceaccount
