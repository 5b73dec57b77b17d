// Package podtemplate serves core/v1 podtemplates.
package podtemplate
