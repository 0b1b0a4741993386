package logaudit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// stateVersion is the state file's format.
const stateVersion = 1

// stateFile is the monitor's memory: per log origin, the last checkpoint that passed a
// full audit, and the log key it was checked with.
type stateFile struct {
	Version int                    `json:"version"`
	Logs    map[string]*savedState `json:"logs"`
}

type savedState struct {
	Checkpoint string    `json:"checkpoint"` // the signed note
	Size       int64     `json:"size"`
	Root       string    `json:"root"`
	LogKey     string    `json:"logKey"`
	Source     string    `json:"source"`
	SavedAt    time.Time `json:"savedAt"`
}

// DefaultStateFile is where `probity log audit` keeps its state unless told otherwise:
// probity/log-audit-state.json in the user's configuration directory.
func DefaultStateFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("couldn't find the user's configuration directory (give --state FILE): %w", err)
	}
	return filepath.Join(dir, "probity", "log-audit-state.json"), nil
}

// loadState reads the state file; a missing file is an empty state.
func loadState(path string) (*stateFile, error) {
	st := &stateFile{Version: stateVersion, Logs: map[string]*savedState{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("couldn't read state file: %w", err)
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("state file %s is not valid: %w", path, err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("state file %s has version %d, want %d", path, st.Version, stateVersion)
	}
	if st.Logs == nil {
		st.Logs = map[string]*savedState{}
	}
	return st, nil
}

// save writes the state file atomically (a temporary file renamed over it), so a crash
// leaves the old state or the new one.
func (st *stateFile) save(path string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("couldn't create state directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".log-audit-state-*")
	if err != nil {
		return fmt.Errorf("couldn't write state file: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("couldn't write state file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("couldn't write state file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("couldn't write state file: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("couldn't write state file: %w", err)
	}
	return nil
}
