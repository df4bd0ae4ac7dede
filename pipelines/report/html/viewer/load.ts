// Trajectories are written beside the page as trajectories/<bucket>/<i>.js, each calling
// mlepipeTrajectory(i, record): a script tag loads from file:// where fetch() may not.

export type Traj = Record<string, unknown> & {
  task_id?: string;
  policy?: string;
  sample?: number;
  node?: string;
  step?: number;
  scaffold?: string;
  messages?: { role: string; content: string }[];
  turns?: Turn[];
  variables?: Record<string, number>;
  evaluation?: Record<string, unknown> | null;
  reward?: number | null;
  journal?: { nodes: JournalNode[]; best: number | null; lower_is_better?: boolean };
  shaping?: {
    kind: string;
    beta?: number;
    turns: { turn: number; category?: string; d: number | null; reason?: string }[];
    rewards?: number[];
  };
};

export interface Turn {
  turn: number;
  action: string;
  name?: string;
  args?: Record<string, unknown>;
  operator?: string;
  parent?: number | null;
  code?: string;
  observation?: string;
  evidence?: Record<string, unknown>;
  intervention?: { mode: string; original: { text: string } };
  exit_code?: number | null;
  timed_out?: boolean;
  duration_ms?: number;
  format_ok?: boolean;
  evaluation?: Record<string, unknown>;
  metric?: number | null;
  buggy?: boolean;
}

export interface JournalNode {
  id: number;
  parent: number | null;
  operator: string;
  metric: number | null;
  buggy: boolean;
  plan?: string;
}

const loaded = new Map<number, Promise<Traj>>();
const waiting = new Map<number, (t: Traj) => void>();

(window as unknown as { mlepipeTrajectory: (i: number, t: Traj) => void }).mlepipeTrajectory = (i, t) => {
  waiting.get(i)?.(t);
  waiting.delete(i);
};

export const trajectoryPath = (i: number) => `trajectories/${Math.floor(i / 1000)}/${i}.js`;

export function loadTrajectory(i: number): Promise<Traj> {
  let p = loaded.get(i);
  if (!p) {
    p = new Promise<Traj>((resolve, reject) => {
      waiting.set(i, resolve);
      const s = document.createElement('script');
      s.src = trajectoryPath(i);
      s.onerror = () => {
        loaded.delete(i);
        reject(new Error(`could not load ${s.src}`));
      };
      s.onload = () => s.remove();
      document.head.append(s);
    });
    loaded.set(i, p);
  }
  return p;
}
