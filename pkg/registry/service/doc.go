// Package service stores core Services, giving each a cluster IP (and node ports) from a fixed range.
package service
