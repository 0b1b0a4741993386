package claims

import (
	"sync"
	"time"
)

// checkLimiter is Check's throttle: one check of a token per CheckEvery, and
// ChecksPerHour checks of an account in any hour. Every check fetches from a server
// Probity does not run (and GitHub's quota is the site's): without it a person could
// make the site hammer an origin or spend its GitHub quota. It lives in memory: a
// restart forgets it, which costs at most one more hour's worth per account.
type checkLimiter struct {
	mu      sync.Mutex
	token   map[string]time.Time  // the last check of a token, by its hash
	account map[int64][]time.Time // the checks of an account in the last hour, oldest first
}

// maxLimiterKeys bounds each map; past it, the keys idle for an hour are dropped.
const maxLimiterKeys = 10000

func newCheckLimiter() *checkLimiter {
	return &checkLimiter{token: map[string]time.Time{}, account: map[int64][]time.Time{}}
}

// allow takes one check of the token (its hash) by the account at now, or returns how
// long to wait.
func (l *checkLimiter) allow(tokenHash []byte, accountID int64, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune(now)
	key := string(tokenHash)
	wait := time.Duration(0)
	if last, ok := l.token[key]; ok && now.Sub(last) < CheckEvery {
		wait = CheckEvery - now.Sub(last)
	}
	times := l.account[accountID]
	for len(times) > 0 && now.Sub(times[0]) >= time.Hour {
		times = times[1:]
	}
	if len(times) >= ChecksPerHour {
		wait = max(wait, time.Hour-now.Sub(times[0]))
	}
	if wait > 0 {
		l.account[accountID] = times
		return false, wait
	}
	l.token[key] = now
	l.account[accountID] = append(times, now)
	return true, 0
}

// prune drops the keys idle for an hour once a map holds maxLimiterKeys.
func (l *checkLimiter) prune(now time.Time) {
	if len(l.token) >= maxLimiterKeys {
		for k, t := range l.token {
			if now.Sub(t) >= CheckEvery {
				delete(l.token, k)
			}
		}
	}
	if len(l.account) >= maxLimiterKeys {
		for k, ts := range l.account {
			if len(ts) == 0 || now.Sub(ts[len(ts)-1]) >= time.Hour {
				delete(l.account, k)
			}
		}
	}
}
