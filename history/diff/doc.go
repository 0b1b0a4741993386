// Package diff compares two reads of an MCP server, each a Surface (its tools, its
// instructions and the version it reports), and returns what changed: the change kinds
// of Probity's history, the potentially breaking findings among them and the badges that
// mark changes worth a closer look. It does no I/O and keeps no state; time enters only
// through Options.Now.
//
// # What is compared
//
// Of each tool only the members of its surface element count (attest.SurfaceDocument):
// name, title, description, inputSchema, outputSchema and annotations. Other members
// (_meta, icons, ...) are ignored, as the surface fingerprint ignores them. Tools are
// compared as JSON values in nfc-jcs/v1 canonical form (attest.Canonicalize), so the
// order of tools and of object members, insignificant whitespace, string escapes and
// Unicode normalization never count. Every tool must be valid JSON under that profile
// (attest.CheckJSON) and an object whose "name" is a string, or Compare fails.
//
// Tools are matched by name (in NFC). A name that is gone is a removed tool, a new name
// an added tool; a renamed tool is one of each. The tool list is a multiset: tools that
// are equal in both reads cancel out first, one for one; the tools left under one name
// are then paired in the order of their canonical bytes, each pair compared as a changed
// tool, and the tools left over are added or removed. So a name sent twice and then once
// gives one removed tool of that name, and no tool_removed finding, since the name
// remains. Of a tool that remains, these are compared:
//
//   - title: the "title" member or, when it is absent or null, annotations.title;
//   - description: the "description" member;
//   - parameters (below): added, removed and newly required ones, and changed parameter
//     descriptions;
//   - inputSchema and outputSchema: changed when the schemas differ other than in the
//     order of a "type" or "required" array (both are sets; duplicates are dropped), in
//     dates in a "description" or "title" string of a schema (below) and, for
//     inputSchema, in the descriptions and titles of parameters, which count as
//     parameter descriptions instead. A missing schema is an empty one. A schema's
//     subschemas are found under the keywords of JSON Schema (properties, items,
//     anyOf, $defs, not, ...); a value under any other keyword (enum, default, const,
//     examples, ...) is data, compared as it is;
//   - the hints annotations.readOnlyHint, destructiveHint, idempotentHint and
//     openWorldHint, each one of three states: absent, false or true (a value that is not
//     a boolean counts as absent). Other members of annotations but its title are
//     ignored;
//   - invisible characters (below).
//
// A title or description is text: a string as it is, an absent member or null as "", any
// other value as its canonical JSON. Instructions are compared the same way (nil and ""
// are equal). Versions are compared byte for byte; which versions the history records
// (semantic versions only, not one seen in the last week) is for its caller to decide.
//
// # Parameters
//
// The parameters of a tool are the properties of its inputSchema and, recursively, the
// properties of a parameter and of the "items" schema of a parameter, to a depth of
// MaxParamDepth. Short paths name them with dots: "opts.depth"; the items schema of
// "files" is "files[]" and a property of it "files[].path". A name that is empty or
// holds anything but ASCII letters, digits, '_', '-' and '$' is written as a Go string
// literal: `opts."a.b"`, `"pa\u200bth"`. Paths in a Breaking finding are long paths that
// start with the tool name (written the same way):
// "get_file.inputSchema.properties.opts.properties.depth",
// "get_file.inputSchema.properties.files.items".
//
// A schema without "type", "properties" and "items" whose anyOf (or, without anyOf,
// oneOf) has exactly one branch other than {"type":"null"} is read through that branch
// for its properties, required list and items (one level): wrapping an object parameter
// into a nullable anyOf keeps its parameters and their paths. Its own description and
// title stay those of the parameter. "$ref" is not resolved, and schemas under allOf,
// not, if/then/else, $defs and the like are not walked for parameters: a change there is
// a schema change only.
//
// A parameter is newly required when its name is in the "required" list of an object
// schema present in both reads (as a parameter, an items schema or the inputSchema)
// and was not in it before, whether or not the parameter itself is new. The
// description of a parameter or items schema is its "description" and "title"; a change
// in them other than in dates is listed in ParamDescriptionsChanged.
//
// # Potentially breaking
//
// A change that may make a call that used to be valid fail (whether it does depends on
// the client's and the server's validation, so this is an upper bound). Breaking
// findings have these kinds:
//
//   - tool_removed: a name that no tool in the later read has;
//   - param_removed: a parameter that is gone, at any depth;
//   - param_newly_required: a parameter newly required, at any depth;
//   - param_type_changed: the declared type of a parameter, or of an items schema,
//     changed so that it may reject a value it used to accept.
//
// The declared type of a schema is a set of type names: its "type" (a string, or an
// array read as a set); without "type", the union of the declared types of its anyOf
// branches (or, without anyOf, its oneOf branches) when every branch declares one;
// otherwise none, which accepts anything. A missing items schema declares none. A
// change of the declared type is breaking unless the new set accepts everything the old
// one did, "integer" counting as part of "number" (a widening):
//
//	{"type":"string"} → {"anyOf":[{"type":"string"},{"type":"null"}]}  widening, not breaking
//	{"type":"string"} → {"type":["null","string"]}                     widening, not breaking
//	{"type":"integer"} → {"type":"number"}                             widening, not breaking
//	{"type":"string"} → no declared type                               widening, not breaking
//	{"type":["string","null"]} → {"type":"string"}                     breaking, narrowing
//	{"type":"number"} → {"type":"integer"}                             breaking, narrowing
//	no declared type → {"type":"string"}                               breaking, narrowing
//	{"type":"string"} → {"oneOf":[{"type":"integer"},{"type":"null"}]} breaking
//
// Narrowing is set when the new set accepts only values the old one accepted. A widening
// is still a schema change (InputSchemaChanged). Before and After of a type change are
// the type names sorted, "null" last, joined with "|" ("string|null"), or "" for no
// declared type. Only declared types count: a new "enum", "pattern" or "maximum" is a
// schema change, not a breaking one. Output schemas never give breaking findings.
//
// # Dates
//
// Dates in text (titles, descriptions, parameter descriptions, descriptions and titles
// anywhere in a schema, and the instructions) are masked before comparing, so a server
// that stamps its tools with the date of each read does not change every day. The Change
// still shows the real text before and after; masking is for comparison only. Month and
// weekday names are English, in any letter case; a year is four digits from 1900 to
// 2199; a day is 1 to 31, with or without a leading zero, and not checked against the
// calendar. These are masked wherever they stand:
//
//   - ISO 8601 dates: 2026-11-30;
//   - numeric dates with a year: 30.11.2026, 30-11-2026, 11/30/2026, 30/11/2026,
//     2026/11/30, 2026.11.30 (day and month 1 to 31 and 1 to 12 where the year comes
//     first, two numbers 1 to 31 where it comes last);
//   - written dates: 30 Nov 2026, 30. November 2026, 30th of November, 2026,
//     November 30, 2026, Nov. 30th 2026 (full names, three-letter abbreviations and
//     "Sept", with or without a period; ordinals st, nd, rd, th);
//   - any of these after a weekday, spelled out or abbreviated (Mon, Tue, Tues, Wed, Thu,
//     Thur, Thurs, Fri, Sat, Sun), with or without a comma: Monday, November 30, 2026;
//     Mon, 30 Nov 2026;
//   - a time of day right after such a date, after "T", spaces (optionally after a comma
//     and before "at") or "@": hours 0–23 and minutes, optional seconds and a fraction
//     of up to nine digits after '.' or ',', an optional am/pm (am, pm, a.m., p.m.), and
//     an optional zone (Z, UTC, GMT, an offset +01:00, +0100 or +01, or UTC or GMT with
//     an offset such as GMT+2): 2026-11-30T06:45:12.123Z, 2026-11-30 06:45 UTC,
//     Mon, 30 Nov 2026 06:45:12 GMT, November 30, 2026 at 6:45 pm;
//   - a time of day (same forms) right before such a date, followed by spaces with an
//     optional comma before and "on" after them: 06:45 UTC on 30 Nov 2026;
//   - the current date in forms without a year: a weekday spelled out (Today is Monday),
//     a day and month (November 30, Nov 30th, 30 November, 30th of November), and an
//     ISO 8601 basic date (20261130), optionally with a basic time (20261130T064512Z).
//     These forms are masked in a tool (in all its text, in both reads) only when the
//     tool's text in the later read names the current date in that form: the date of
//     Options.Now in UTC or the day before or after it (a server may stamp its local
//     date). Instructions are treated alike on their own. With a zero Options.Now they
//     are never masked. So on a Tuesday "Today is Monday" becoming "Today is Tuesday" is
//     no change, and neither, at that price, is "Runs every Monday" becoming "Runs every
//     Tuesday"; "Runs every Friday" becoming "Runs every Saturday" is.
//
// A date stands alone: it starts at the start of a word (not right after an ASCII
// letter, digit or '_') and ends at a boundary: the end of the text, or a byte that is
// not an ASCII letter, digit or '_', nor ':' or '.' followed by a digit. So
// "v2026-11-30a", "2026-11-301" and "id_2026-11-30" are not dates, and in
// "2026-11-30 06:45:12abc" only the date is. Of the matches starting at one place the
// longest is masked, and it is replaced by one placeholder, so text that differs only in
// dates (and the times next to them) is equal, while any other wording change next to a
// date still counts: "Data as of November 30, 2026" and "Data as of December 1, 2026"
// are equal; "Data as of ..." and "Prices as of ..." are not.
//
// Not masked: a month and year (November 2026), a year alone, a time alone, a numeric
// date without a year (11/30), relative words (today, yesterday), Unix timestamps, other
// languages' month names (Dezember), and dates in a value that is not a title or
// description (default, examples, enum, ...).
//
// # Invisible characters
//
// Invisible characters are those the hidden_instructions check flags
// (checks.InvisibleCount). They are counted in each text field of a tool: its title,
// description and annotations.title, every "description" and "title" string at any depth
// of its inputSchema and outputSchema, and the member names of every "properties" object
// there. A remaining tool has InvisibleNew when some field (by its JSON path) has more
// of them than it had before, a field that is new counting from zero.
//
// # Badges
//
// Badges mark changes worth a closer look, one per kind and tool:
//
//   - no_longer_read_only: a remaining tool's readOnlyHint was true and is not;
//   - newly_destructive: a remaining tool's destructiveHint was not true and is true;
//   - new_destructive_tool: an added tool whose destructiveHint is true. Only an explicit
//     true counts: MCP's default (destructive unless read-only) would mark every added
//     tool without annotations;
//   - newly_required_param: a remaining tool has a newly required parameter;
//   - invisible_characters: a remaining tool with InvisibleNew, an added tool with
//     invisible characters, or instructions (Tool "") that have more of them than before;
//   - new_instructions: the instructions changed and are not empty (from none, or from
//     other text).
//
// # Limits
//
// Compare is safe on hostile input and does work linear in it: tools equal byte for byte
// in both reads cost a hash and a validation pass; other tools are canonicalized,
// decoded and compared once. Each Surface may hold at most MaxTools tools and
// MaxSurfaceBytes bytes of tools, instructions and version; parameters nest at most
// MaxParamDepth deep; and the paths and findings a Change reports are bounded in total
// size (16 MiB). Past any of these Compare returns an error that wraps ErrTooLarge
// rather than a partial Change. JSON nested deeper than attest.MaxDepth is not valid
// under the canonical profile, an error like any invalid tool.
//
// # Summary
//
// Change.Summary is one line for feeds, emails and the history's list, built only from
// counts, fixed words and version numbers: it never quotes other server text, not even a
// tool name, so it is safe where nothing escapes it. A version appears only when it is a
// semantic version (1.3.0, v2.0.0-beta.1, at most 64 bytes). Examples:
//
//	2 tools added, 1 removed
//	1 tool changed: description
//	3 tools changed: title, parameters, hints
//	instructions changed
//	version 1.2.0 → 1.3.0
//	1 tool removed; 2 tools changed: input schema, output schema; version changed
package diff
