package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/probity-dev/probity/attest"
	"github.com/probity-dev/probity/keys"
	"github.com/probity-dev/probity/verifier"
)

// maxBytesInFlight bounds the envelope data read but not yet verified and reported.
const maxBytesInFlight = 64 << 20

// weight is what an envelope holds of the byte budget (at least 1, for empty items).
func weight(data []byte) int64 { return max(int64(len(data)), 1) }

// MaxLineSize bounds one envelope: one line of a JSONL export, or a whole single-envelope
// file. Longer input is reported as malformed rather than read into memory.
const MaxLineSize = 4 << 20

// Item is one envelope's outcome in a stream, in input order.
type Item struct {
	// Source is "path" for a single-envelope file and "path:line" for a JSONL line.
	Source string
	Result *verifier.Result
	Err    error
}

// Summary counts a stream's outcomes.
type Summary struct {
	Total    int `json:"total"`
	Verified int `json:"verified"`
	Failed   int `json:"failed"`
}

// StreamConfig configures VerifyPaths.
type StreamConfig struct {
	Keys   *keys.Document
	Policy verifier.Policy
	// Workers verify in parallel; 0 means GOMAXPROCS.
	Workers int
	// Emit receives every item in input order, from one goroutine.
	Emit func(Item)
}

// IOError wraps a failure to read input, as opposed to an envelope that fails.
type IOError struct{ Err error }

func (e *IOError) Error() string { return e.Err.Error() }
func (e *IOError) Unwrap() error { return e.Err }

// VerifyPaths verifies every envelope and bundle found under paths: a file holding one
// envelope or bundle (pretty-printed or not), a JSONL file with one per line, or a directory,
// walked in lexical order for files ending in .json, .jsonl or .dsse (files named
// keys.json are key documents and skipped). Input is streamed and verified by
// cfg.Workers goroutines; memory stays bounded whatever the input size. A value with a
// top-level "bundle" member (IsBundle) is verified with verifier.VerifyBundle, any other
// with verifier.Verify. It returns an *IOError when input cannot be read; envelopes and
// bundles that fail are counted, not errors.
func VerifyPaths(ctx context.Context, paths []string, cfg StreamConfig) (Summary, error) {
	if err := cfg.Policy.Validate(); err != nil {
		return Summary{}, err
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type job struct {
		seq    int
		source string
		data   []byte
		err    error
		res    *verifier.Result
		done   chan struct{}
		weight int64 // what the job holds of the byte budget
	}
	// jobs flow to the workers and, in input order, to the emitter. The window bounds
	// how many are in flight, and the byte budget how much envelope data: memory stays
	// bounded whatever the input holds.
	const window = 1024
	work := make(chan *job, window)
	ordered := make(chan *job, window)
	bytesInFlight := semaphore.NewWeighted(maxBytesInFlight)

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				if j.err == nil {
					if IsBundle(j.data) {
						j.res, j.err = verifier.VerifyBundle(j.data, cfg.Keys, cfg.Policy)
					} else {
						j.res, j.err = verifier.Verify(j.data, cfg.Keys, cfg.Policy)
					}
				}
				j.data = nil
				close(j.done)
			}
		}()
	}

	var readErr error
	go func() {
		defer close(ordered)
		defer close(work)
		seq := 0
		readErr = walkEnvelopes(ctx, paths, func(source string, data []byte, err error) bool {
			j := &job{seq: seq, source: source, data: data, err: err, done: make(chan struct{}), weight: weight(data)}
			seq++
			if bytesInFlight.Acquire(ctx, weight(data)) != nil {
				return false
			}
			select {
			case ordered <- j:
			case <-ctx.Done():
				bytesInFlight.Release(weight(data))
				return false
			}
			select {
			case work <- j:
			case <-ctx.Done():
				// The emitter waits for this job: finish it as cancelled.
				j.err, j.data = ctx.Err(), nil
				close(j.done)
				return false
			}
			return true
		})
	}()

	var sum Summary
	for j := range ordered {
		<-j.done
		bytesInFlight.Release(j.weight)
		sum.Total++
		if j.err == nil {
			sum.Verified++
		} else {
			sum.Failed++
		}
		if cfg.Emit != nil {
			cfg.Emit(Item{Source: j.source, Result: j.res, Err: j.err})
		}
	}
	wg.Wait()
	if readErr != nil {
		return sum, &IOError{Err: readErr}
	}
	return sum, ctx.Err()
}

// IsBundle reports whether data, one JSON value of the input, is a bundle (attest.Bundle)
// rather than a bare envelope: an object with a top-level "bundle" member. Bundles are
// written with that member first, so the scan usually stops at the first key; it never
// reads past data and gives up after 16 members (an envelope has three).
func IsBundle(data []byte) bool {
	i := attest.SkipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i++
	for range 16 {
		i = attest.SkipJSONSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return false
		}
		end := attest.SkipJSONString(data, i)
		if string(data[i:end]) == `"bundle"` {
			return true
		}
		i = attest.SkipJSONSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = attest.SkipJSONSpace(data, attest.SkipJSONValue(data, attest.SkipJSONSpace(data, i+1)))
		if i >= len(data) || data[i] != ',' {
			return false
		}
		i++
	}
	return false
}

// walkEnvelopes calls fn with each envelope's bytes, or with a *verifier.Failure for an entry that
// cannot be an envelope (an over-long line). It stops when fn returns false.
func walkEnvelopes(ctx context.Context, paths []string, fn func(source string, data []byte, err error) bool) error {
	for _, p := range paths {
		if p == "-" {
			if err := readEnvelopes(ctx, "-", os.Stdin, fn); err != nil {
				return err
			}
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("couldn't read %q: %w", p, err)
		}
		if !info.IsDir() {
			if err := readFile(ctx, p, fn); err != nil {
				return err
			}
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("couldn't read %q: %w", path, err)
			}
			if d.IsDir() || d.Name() == keys.DocumentFile {
				return nil
			}
			if !d.Type().IsRegular() {
				return nil // symlinks, FIFOs and devices could hang or loop the walk
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".json", ".jsonl", ".dsse":
				return readFile(ctx, path, fn)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func readFile(ctx context.Context, path string, fn func(string, []byte, error) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("couldn't read %q: %w", path, err)
	}
	defer f.Close()
	return readEnvelopes(ctx, path, f, fn)
}

// readEnvelopes decides between JSONL and a single envelope by the first non-blank line:
// if it is a complete JSON value the input is JSONL, otherwise the input is one
// (pretty-printed) envelope.
func readEnvelopes(ctx context.Context, name string, r io.Reader, fn func(string, []byte, error) bool) error {
	br := bufio.NewReaderSize(r, 256<<10)
	sawFirst := false
	lineNo := 0
	var single bytes.Buffer
	jsonl := false
	var pending []byte
	pendingLine := 0
	for {
		if ctx.Err() != nil {
			return nil
		}
		line, tooLong, err := readLine(br)
		if err != nil && err != io.EOF {
			return fmt.Errorf("couldn't read %q: %w", name, err)
		}
		if len(line) > 0 || tooLong || err == nil {
			lineNo++
		}
		trimmed := bytes.TrimSpace(line)
		switch {
		case jsonl:
			// The first line is held back until a second one shows the input is a
			// JSONL export, so that a one-line file is reported by its name alone.
			if pending != nil && (len(trimmed) > 0 || tooLong) {
				if !fn(name+":"+strconv.Itoa(pendingLine), pending, nil) {
					return nil
				}
				pending = nil
			}
			if tooLong {
				if !fn(name+":"+strconv.Itoa(lineNo), nil, &verifier.Failure{Reason: verifier.ReasonMalformedEnvelope, Detail: fmt.Sprintf("line longer than %d bytes", MaxLineSize)}) {
					return nil
				}
			} else if len(trimmed) > 0 {
				if !fn(name+":"+strconv.Itoa(lineNo), trimmed, nil) {
					return nil
				}
			}
		case !sawFirst && len(trimmed) == 0 && !tooLong:
			// leading blank lines
		case !sawFirst && tooLong:
			// Too long to be an envelope: report it and read the rest line by line.
			sawFirst, jsonl = true, true
			if !fn(name+":"+strconv.Itoa(lineNo), nil, &verifier.Failure{Reason: verifier.ReasonMalformedEnvelope, Detail: fmt.Sprintf("line longer than %d bytes", MaxLineSize)}) {
				return nil
			}
		case !sawFirst:
			sawFirst = true
			if !tooLong && json.Valid(trimmed) {
				jsonl = true
				pending, pendingLine = trimmed, lineNo
			} else {
				single.Write(line)
				single.WriteByte('\n')
			}
		default:
			if single.Len()+len(line) > MaxLineSize || tooLong {
				fn(name, nil, &verifier.Failure{Reason: verifier.ReasonMalformedEnvelope, Detail: fmt.Sprintf("envelope larger than %d bytes", MaxLineSize)})
				return nil
			}
			single.Write(line)
			single.WriteByte('\n')
		}
		if err == io.EOF {
			break
		}
	}
	if pending != nil {
		fn(name, pending, nil)
	}
	if !jsonl && single.Len() > 0 {
		fn(name, bytes.TrimSpace(single.Bytes()), nil)
	}
	return nil
}

// readLine returns the next line without its newline. A line longer than MaxLineSize is
// skipped to its end and reported as tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if buf == nil && err == nil && len(chunk) <= MaxLineSize {
			// The whole line was in the buffer: one copy, of the right size.
			return bytes.Clone(chunk[:len(chunk)-1]), false, nil
		}
		if len(buf)+len(chunk) > MaxLineSize {
			tooLong = true
			buf = buf[:0]
		} else if !tooLong {
			buf = append(buf, chunk...)
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return bytes.TrimSuffix(buf, []byte("\n")), tooLong, nil
		default:
			return buf, tooLong, err
		}
	}
}
