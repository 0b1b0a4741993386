// make.js writes the known answers of TestMatchesShields: each badge as
// shields.io's badge-maker 6.0.0 draws it in the flat style. From this
// directory:
//
//	npm install --no-save badge-maker@6.0.0 && node make.js && rm -r node_modules
//
// and `git diff .` should show nothing.
const { makeBadge } = require('badge-maker');
const fs = require('fs');
const cases = {
  "build-passing": ["build", "passing", "#4c1"],
  "verified": ["probity", "verified", "#4c1"],
  "signed": ["probity", "signed", "#007ec6"],
  "login": ["probity", "signed: login required", "#5d7a91"],
  "unsigned-score": ["probity", "unsigned | score 87", "#777"],
  "not-yet-probed": ["probity", "not yet probed", "#9f9f9f"],
  "light": ["probity", "Wide WWW text %@ ~", "#eee"],
  "no-label": ["", "message only", "#007ec6"],
  "escape": ["a&b", "<x y=\"1\">'", "#e05d44"],
  // The messages of issue 16.
  "not-yet-checked": ["probity", "not yet checked", "#9f9f9f"],
  "offline": ["probity", "offline", "#333"],
  "one-risk": ["probity", "1 risk", "#e05d44"],
  "risks": ["probity", "12 risks", "#e05d44"],
  "login-required": ["probity", "login required", "#5d7a91"],
  "login-required-score": ["probity", "login required | score 87", "#5d7a91"],
  "no-risks-found": ["probity", "no risks found", "#007ec6"],
  "no-risks-found-score": ["probity", "no risks found | score 87", "#007ec6"],
  "score": ["probity", "score 87", "#007ec6"],
  "checked": ["probity", "checked", "#5d7a91"],
  "unsigned": ["probity", "unsigned", "#777"],
};
for (const [name, [label, message, color]] of Object.entries(cases)) {
  fs.writeFileSync(name + ".svg", makeBadge({ label, message, color, style: "flat" }));
}
