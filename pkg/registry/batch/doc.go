// Package batch stores batch/v1 Jobs and CronJobs, with their status subresources.
package batch
