// A JavaScript bot that reads the file the test planted on the host: it must not be visible.
const fs = require("fs");
const path = require("path");

const TARGET = JSON.parse(fs.readFileSync(path.join(__dirname, "target.json"), "utf8"));
let done = false;

function act(decision) {
  if (!done) {
    done = true;
    let text;
    try {
      text = fs.readFileSync(TARGET.path, "utf8");
    } catch (err) {
      console.error(`CONTAINED: ${TARGET.path}: ${err.message}`);
    }
    if (text !== undefined) throw new Error(`ESCAPED: read ${TARGET.path}: ${JSON.stringify(text.slice(0, 40))}`);
  }
  return decision.legal[0];
}

module.exports = { act };
