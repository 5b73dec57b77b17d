//go:build !linux

package main

import (
	"errors"
	"time"
)

// processCPU is only implemented on Linux; elsewhere the CPU column shows "–".
func processCPU(int) (time.Duration, error) {
	return 0, errors.ErrUnsupported
}
