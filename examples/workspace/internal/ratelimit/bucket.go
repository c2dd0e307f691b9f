// Package ratelimit is a per-tenant token bucket (moved here from ratelimit/).
package ratelimit
