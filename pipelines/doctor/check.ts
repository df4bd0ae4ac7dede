// One line of `mlepipe doctor`: what was checked, whether it is there, and how to fix it when it is not.
export interface Check {
  name: string;
  ok: boolean;
  required: boolean;
  detail: string;
  fix?: string;
}
