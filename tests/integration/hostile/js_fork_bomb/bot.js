// A JavaScript bot that starts up to 300 sleeping child processes at load: the pids limit
// must stop it first. It then kills every child it started (only its own).
const { spawn } = require("child_process");

const BOUND = 300;

function bomb() {
  const children = [];
  let failure = null;
  while (children.length < BOUND) {
    let child;
    try {
      child = spawn("sleep", ["60"], { stdio: "ignore" });
    } catch (err) {
      failure = err;
      break;
    }
    // Node reports EAGAIN (and ENOENT, EMFILE) asynchronously: no pid now, an 'error' later.
    let error = null;
    child.on("error", (err) => {
      error = err;
    });
    if (child.pid === undefined) {
      failure = error || new Error("spawn EAGAIN: no pid");
      break;
    }
    children.push(child);
  }
  for (const child of children) child.kill("SIGKILL"); // reaped by Node as they exit
  if (failure === null) throw new Error(`ESCAPED: started ${BOUND} children`);
  console.error(`CONTAINED: fork failed after ${children.length} children: ${failure.message}`);
}

bomb();

function act(decision) {
  return decision.legal[0];
}

module.exports = { act };
