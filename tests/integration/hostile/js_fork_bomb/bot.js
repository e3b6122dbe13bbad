// A JavaScript bot that starts up to 300 sleeping child processes at load: the pids limit
// must stop it first. It then kills every child it started (only its own). Node reports a
// failed spawn's errno (EAGAIN) asynchronously, so the verdict is printed at the first
// decision, once the error has arrived.
const { spawn } = require("child_process");

const BOUND = 300;
let failure = null;

function bomb() {
  const children = [];
  while (children.length < BOUND) {
    let child;
    try {
      child = spawn("sleep", ["60"], { stdio: "ignore" });
    } catch (err) {
      failure = err;
      break;
    }
    // Node reports EAGAIN (and ENOENT, EMFILE) asynchronously: no pid now, an 'error' later.
    child.on("error", (err) => {
      failure = err;
    });
    if (child.pid === undefined) {
      failure = failure || new Error("spawn failed: no pid");
      break;
    }
    children.push(child);
  }
  for (const child of children) child.kill("SIGKILL"); // reaped by Node as they exit
  if (failure === null) throw new Error(`ESCAPED: started ${BOUND} children`);
  return children.length;
}

const started = bomb();
let done = false;

function act(decision) {
  if (!done) {
    done = true;
    console.error(`CONTAINED: fork failed after ${started} children: ${failure.message}`);
  }
  return decision.legal[0];
}

module.exports = { act };
