// Command kubectl is the real kubectl, built from k8s.io/kubectl at the
// version in go.mod, so tests drive the same client users run.
package main
