// A JavaScript bot that connects to the listener the test opened on the host's 127.0.0.1:
// it must fail. act() is synchronous, so the attempt runs at load in a child node process
// (execFileSync, bounded by a 2 s connect timeout and a 10 s kill), before the match starts.
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const TARGET = JSON.parse(fs.readFileSync(path.join(__dirname, "target.json"), "utf8"));

const PROBE = `
const net = require("net");
const port = Number(process.argv[1]);
const s = net.connect({ host: "127.0.0.1", port });
const stop = setTimeout(() => { console.log("CONTAINED: connect to 127.0.0.1:" + port + ": timed out"); s.destroy(); }, 2000);
s.on("connect", () => { s.write("ESCAPED"); clearTimeout(stop); s.destroy(); console.log("ESCAPED: talked to 127.0.0.1:" + port); });
s.on("error", (e) => { clearTimeout(stop); console.log("CONTAINED: connect to 127.0.0.1:" + port + ": " + e.message); });
`;

const out = execFileSync(process.execPath, ["-e", PROBE, String(TARGET.port)], {
  encoding: "utf8",
  timeout: 10000,
}).trim();
if (!out.startsWith("CONTAINED")) throw new Error(out || "ESCAPED: the probe said nothing");
console.error(out);

function act(decision) {
  return decision.legal[0];
}

module.exports = { act };
