import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** What the check reads of an accepted connection (a node `Socket` has it). */
export interface AcceptedConnection {
  readonly remotePort?: number | undefined;
  readonly localPort?: number | undefined;
}

/**
 * A connection check that admits only the processes of one process tree (the agent `unstuck run`
 * started, and whatever it started), for an agent that cannot be given the run's token off its
 * command line (Codex). Linux only: the client's socket is found in /proc/net/tcp by its port
 * (its inode, and the uid that owns it), then among the open files of the tree's processes.
 * Undefined where /proc/net/tcp is not there. Synchronous, and asked once per connection before
 * anything of it is read; an agent keeps its connections alive, so this is rare.
 */
export function createProcessTreeCheck(
  root: () => number | undefined,
): ((socket: AcceptedConnection) => boolean) | undefined {
  if (!existsSync('/proc/net/tcp')) return undefined;
  const uid = process.getuid?.();
  return (socket) => {
    const pid = root();
    if (pid === undefined || socket.remotePort === undefined || socket.localPort === undefined) return false;
    const found = socketOf(socket.remotePort, socket.localPort);
    if (found === undefined || (uid !== undefined && found.uid !== uid)) return false;
    const link = `socket:[${found.inode}]`;
    for (const member of treeOf(pid)) if (holds(member, link)) return true;
    return false;
  };
}

/** The client side of a loopback connection from `clientPort` to `serverPort`: its inode and owner. */
function socketOf(clientPort: number, serverPort: number): { inode: string; uid: number } | undefined {
  const local = `:${clientPort.toString(16).toUpperCase().padStart(4, '0')}`;
  const remote = `:${serverPort.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'latin1');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const fields = line.trim().split(/\s+/);
      const [, localAddress, remoteAddress, , , , , owner, , inode] = fields;
      if (localAddress?.endsWith(local) !== true || remoteAddress?.endsWith(remote) !== true) continue;
      if (!isLoopback(localAddress) || inode === undefined || inode === '0') continue;
      return { inode, uid: Number(owner) };
    }
  }
  return undefined;
}

/** 127.0.0.0/8 as /proc/net/tcp writes it (little-endian hex), or ::ffff:127.x / ::1 in tcp6. */
function isLoopback(address: string): boolean {
  const host = address.slice(0, address.indexOf(':'));
  if (host.length === 8) return host.endsWith('7F');
  return host === '00000000000000000000000001000000' || /^0000000000000000FFFF0000[0-9A-F]{6}7F$/.test(host);
}

/** `root` and every process descended from it, by the parent each names in /proc/PID/stat. */
function treeOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue; // gone since the listing
    }
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after the last ')'.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(parent) ?? [];
    list.push(Number(entry));
    children.set(parent, list);
  }
  const tree = [root];
  for (let index = 0; index < tree.length; index += 1) tree.push(...(children.get(tree[index] as number) ?? []));
  return tree;
}

function holds(pid: number, link: string): boolean {
  let descriptors: string[];
  try {
    descriptors = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const descriptor of descriptors) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${descriptor}`) === link) return true;
    } catch {
      // closed since the listing
    }
  }
  return false;
}
