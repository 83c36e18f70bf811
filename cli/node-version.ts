/** The oldest Node the kit runs on (package.json `engines`): undici 8 and the Temporal SDK need it. */
export const MINIMUM_NODE = '22.12.0';

/** One line for the user when `version` (e.g. process.versions.node) is older than MINIMUM_NODE, else undefined. */
export function nodeTooOld(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [minMajor = 0, minMinor = 0] = MINIMUM_NODE.split('.').map(Number);
  if (major > minMajor || (major === minMajor && minor >= minMinor)) return undefined;
  return `signal-kit needs Node ${MINIMUM_NODE} or newer; this is Node ${version} (${process.execPath}). Install Node 24, or run 'npm run bootstrap' in a clone, which fetches it.`;
}
