package checks

import (
	"slices"
	"strings"
	"testing"
)

func TestNameSegments(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"delete_file", []string{"delete", "file"}},
		{"deleteFile", []string{"delete", "file"}},
		{"DeleteFile", []string{"delete", "file"}},
		{"DELETE_FILE", []string{"delete", "file"}},
		{"remove-item", []string{"remove", "item"}},
		{"fs.rm", []string{"fs", "rm"}},
		{"HTTPServerKill", []string{"http", "server", "kill"}},
		{"exec2sql", []string{"exec", "2", "sql"}},
		{"git/push", []string{"git", "push"}},
		{"löschen_Datei", []string{"löschen", "datei"}},
		{"__", nil},
	}
	for _, tt := range tests {
		if got := nameSegments(tt.name); !slices.Equal(got, tt.want) {
			t.Errorf("nameSegments(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDestructiveNames(t *testing.T) {
	positives := []string{
		"delete_file", "deleteFile", "DeleteUser", "user_delete", "remove-item", "removeItem", "drop_table",
		"dropTable", "destroy_instance", "purge_cache", "wipe-disk", "truncate_log", "kill_process", "killProcess",
		"erase_all", "terminate_vm", "exec", "exec_sql", "execSql", "execute", "executeQuery", "eval_js",
		"run_command", "runCommand", "run-shell", "run_script", "shell", "shell_exec", "shellExec", "bash",
		"fs.rm", "db/drop", "DELETE_ALL",
	}
	negatives := []string{
		"deleted_items_report", "undelete", "get_execution_status", "executor_info", "dropdown_options",
		"system_info", "list_files", "remover_status", "run", "run_tests", "shellfish_recipes", "killer_queen_lyrics",
		"evaluate_model", "read_file", "truncated_text", "removal_request", "",
	}
	for _, n := range positives {
		if destructiveSegment(n) == "" {
			t.Errorf("%q should count as destructive", n)
		}
	}
	for _, n := range negatives {
		if seg := destructiveSegment(n); seg != "" {
			t.Errorf("%q should not count as destructive (segment %q)", n, seg)
		}
	}
}

func TestDestructiveAnnotations(t *testing.T) {
	tests := []struct {
		name  string
		tools []string
		key   string
		notes []string
	}{
		{"declared", []string{`{"name":"delete_file","annotations":{"destructiveHint":true}}`}, "consistent", nil},
		{"declared with readOnly false", []string{`{"name":"kill","annotations":{"readOnlyHint":false,"destructiveHint":true}}`}, "consistent", nil},
		// Nothing named like a destructive operation: only the hints were judged, and the
		// reason says so instead of "every one of the 0 tools … declares destructiveHint".
		{"negatives need nothing", []string{`{"name":"deleted_items_report"}`, `{"name":"undelete"}`, `{"name":"get_execution_status"}`}, "no_contradictory_hints", nil},
		{"absent", []string{`{"name":"delete_file"}`}, "missing_destructive_hint", []string{"destructiveHint is absent"}},
		{"annotations not an object", []string{`{"name":"delete_file","annotations":[true]}`}, "missing_destructive_hint", []string{"absent"}},
		{"hint not a boolean", []string{`{"name":"delete_file","annotations":{"destructiveHint":"true"}}`}, "missing_destructive_hint", []string{"absent"}},
		{"false", []string{`{"name":"execSql","annotations":{"destructiveHint":false}}`}, "missing_destructive_hint", []string{"(exec) but destructiveHint is false"}},
		{"claims read-only", []string{`{"name":"wipe","annotations":{"readOnlyHint":true}}`}, "missing_destructive_hint", []string{"readOnlyHint is true"}},
		{"contradictory", []string{`{"name":"list","annotations":{"readOnlyHint":true,"destructiveHint":true}}`}, "contradictory_hints", []string{"both true"}},
		{"malformed tools skipped", []string{`[1]`, `{"name":null}`, `nonsense`, `{"name":"ok"}`}, "no_contradictory_hints", nil},
		{"malformed tools skipped, one destructive", []string{`[1]`, `{"name":null}`, `{"name":"rm","annotations":{"destructiveHint":true}}`}, "consistent", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := with(func(o *Observation) { o.Tools.Tools = rawTools(tt.tools...) })
			r := runCheck(t, "destructive_annotations", o)
			assertResultValid(t, r)
			if r.Reason.Key != tt.key {
				t.Fatalf("%s %v %+v", r.Reason.Key, r.Reason.Params, r.Evidence)
			}
			for i, n := range tt.notes {
				if i >= len(r.Evidence) || !strings.Contains(r.Evidence[i].Note, n) {
					t.Fatalf("evidence %+v lacks %q", r.Evidence, n)
				}
			}
		})
	}
}
