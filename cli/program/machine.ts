// The commands about the machines mlepipe works on: serving a checkpoint here, the GPU hosts of the
// settings and their image, and what this machine has installed.
import type { Command } from 'commander';
import type { IO } from '../io.js';
import { setOption, type Registrar } from './options.js';

export function registerMachineCommands(program: Command, { act }: Registrar, io: IO): void {
  program
    .command('serve')
    .description(
      "serve a checkpoint (an sft node's checkpoint/ or outputs, or a model folder) on a trainer worker: an OpenAI-compatible endpoint, until Ctrl-C",
    )
    .argument('<checkpoint>')
    .option('--port <n>', 'port to listen on (0: a free one)', '8000')
    .option('--host <h>', 'address to listen on', '127.0.0.1')
    .option('--threads <n>', 'torch CPU threads')
    .action(
      act(async (ck: string, o: { port?: string; host?: string; threads?: string }) =>
        (await import('../commands/serve.js')).serveCommand(ck, o, io),
      ),
    );

  const hosts = program
    .command('hosts')
    .description('list the hosts in mlepipe.config.yaml: reachability, Docker version, GPUs (nvidia-smi there), image')
    .option('--json', 'JSON output')
    .addOption(setOption('a host setting: hosts.NAME.KEY'))
    .action(
      act(async (o: { json?: boolean; set?: string[] }) => (await import('../commands/hosts.js')).hostsCommand(o, io)),
    );
  hosts
    .command('build')
    .description("build the image nodes run in (gpu/Dockerfile) on a host's engine")
    .argument('<name>', 'a host in mlepipe.config.yaml')
    .option('--file <dockerfile>', 'another Dockerfile (its folder is the context)')
    .option('--tag <image>', "the image's name (default: the host's image:, else mlepipe-host:latest)")
    .addOption(setOption('a host setting: hosts.NAME.KEY'))
    .action(
      act(async (name: string, o: { file?: string; tag?: string; set?: string[] }) =>
        (await import('../commands/hosts.js')).hostsBuildCommand(name, o, io),
      ),
    );

  program
    .command('doctor')
    .description(
      'check node, python (numpy/pandas/sklearn), the Python environments (agent, trainer), bubblewrap, docker, GPU hosts',
    )
    .option('--json', 'JSON output')
    .action(act(async (o: { json?: boolean }) => (await import('../commands/doctor.js')).doctorCommand(o, io)));
}
