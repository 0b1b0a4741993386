package mail

import "net"

// ErrSendTimeout is the cause of a Send that took Config.SendTimeout.
var ErrSendTimeout = errSendTimeout

// WrapConns makes s pass each new TCP connection through wrap.
func WrapConns(s *Sender, wrap func(net.Conn) net.Conn) { s.wrapConn = wrap }
