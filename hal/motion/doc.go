// Package motion plays motion scripts in NUbots' YAML format on the device
// layer (docs/devices.md §6, §7): it loads and checks scripts with
// positioned errors, maps servo ids to joints, times chained frames without
// drift, and arbitrates joints between motions by priority.
package motion
