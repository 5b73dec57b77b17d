// Package features defines miniapiserver's feature gates and registers them on
// the process-wide gate, so --feature-gates parses them beside upstream's.
package features
