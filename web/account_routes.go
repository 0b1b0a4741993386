package web

import (
	"github.com/gin-gonic/gin"
)

// writePaths sets up the write paths of cfg: the services, the cookies (Secure by the
// base URL), CrossOriginProtection, the POST body bound and the write routes' bucket.
func (h *handlers) writePaths(cfg Config, base string) error {
	jar, err := newCookieJar(base)
	if err != nil {
		return err
	}
	cop, err := newCrossOriginProtection(base)
	if err != nil {
		return err
	}
	lim, err := newLimiter(cfg.WriteRateLimit, cfg.Now)
	if err != nil {
		return err
	}
	h.acc, h.follows, h.hooks, h.claims = cfg.Accounts, cfg.Follows, cfg.Webhooks, cfg.Claims
	h.maint, h.ops, h.listings = cfg.Maintainers, cfg.Operators, cfg.Listings
	if cfg.Maintainers != nil {
		h.disputes = cfg.Disputes
	}
	h.console, h.desk, h.reports, h.baselines = cfg.Console, cfg.DisputeDesk, cfg.Reports, cfg.Baselines
	h.jar, h.cop, h.writeLim, h.postBody = jar, cop, lim, maxPostBody
	return nil
}

// writeRoutes registers the write paths; get registers a GET and HEAD route.
func (h *handlers) writeRoutes(r *gin.Engine, get func(string, gin.HandlerFunc)) {
	get("/signin", h.signIn)
	r.POST("/signin/code", h.signInCode)
	get("/signin/verify", h.signInVerify)
	r.POST("/signin/verify", h.signInVerify)
	get("/signin/github", h.gitHubStart)
	get("/signin/github/callback", h.gitHubCallback)
	r.POST("/signout", h.signOut)
	r.POST("/signout/everywhere", h.signOutEverywhere)
	get("/account", h.account)
	r.POST("/account/delete", h.deleteAccount)
	r.POST("/account/email", h.accountEmail)
	r.POST("/account/email/verify", h.accountEmailVerify)
	get("/privacy", h.privacy)
	if h.follows != nil {
		get("/followed", h.followed(false))
		get("/followed.json", h.followed(true))
		r.POST("/followed/mode", h.setMode)
		r.POST("/s/:slug/follow", h.follow(true))
		r.POST("/s/:slug/unfollow", h.follow(false))
		get("/unsubscribe/:token", h.unsubscribeOffer)
		r.POST("/unsubscribe/:token", h.unsubscribe)
		// The one-click address (List-Unsubscribe): some mail apps open it instead of
		// posting to it, and then see the buttons.
		get("/unsubscribe/:token/one-click", h.unsubscribeOffer)
		r.POST("/unsubscribe/:token/one-click", h.oneClick) // oneClickPattern
	}
	if h.hooks != nil {
		get("/account/webhooks", h.webhooks)
		r.POST("/account/webhooks", h.addWebhook)
		get("/account/webhooks/:id", h.webhookLog)
		r.POST("/account/webhooks/:id/delete", h.changeWebhook(true))
		r.POST("/account/webhooks/:id/enable", h.changeWebhook(false))
	}
	if h.reports != nil {
		get("/s/:slug/report", h.reportForm)
		r.POST("/s/:slug/report", h.reportSubmit)
		get("/ops/reports", h.opsReports)
		get("/ops/reports/:id", h.opsReport)
		r.POST("/ops/reports/:id/withdraw", h.opsReportDecide(true))
		r.POST("/ops/reports/:id/decline", h.opsReportDecide(false))
		r.POST("/ops/reports/restore", h.opsRestore)
	}
	if h.claims != nil {
		get("/s/:slug/claim", h.claim)
		r.POST("/s/:slug/claim", h.claimStart)
		r.POST("/s/:slug/claim/check", h.claimCheck)
	}
	if h.listings != nil && h.maint != nil {
		get(listingEditRoute, h.listingEdit)
		r.POST(listingEditRoute, h.listingSave)
		r.POST("/s/:slug/recheck", h.recheck)
	}
	if h.disputes != nil {
		get("/s/:slug/contest", h.contestForm)
		r.POST("/s/:slug/contest", h.contest)
	}
	if h.ops != nil && h.console != nil {
		h.opsRoutes(r, get) // ops.go
	}
	if h.baselines != nil {
		get("/s/:slug/baseline", h.baselineShow)
		r.POST("/s/:slug/baseline", h.baselineApprove)
	}
}
