module github.com/probity-dev/probity

go 1.26.8

require (
	github.com/gowebpki/jcs v1.0.2
	github.com/secure-systems-lab/go-securesystemslib v0.11.1
	golang.org/x/text v0.44.0
)

require (
	golang.org/x/crypto v0.55.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
