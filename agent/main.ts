// The agent: small steps the operator's image runs inside member Pods (init containers) and Jobs, where a
// copy can take longer than any function request. `etcdfn-agent restore-fetch|restore-commit ...`
// (the commands: agent/program.ts). A failed step exits non-zero so the Pod goes no further.
import { runAgent } from './program.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const exitCode = await runAgent(process.argv);
if (exitCode !== 0) process.exitCode = exitCode;
