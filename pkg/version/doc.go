// Package version says which Kubernetes version miniapiserver reports on /version.
package version
