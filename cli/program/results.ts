// The commands that show what a run left: two experiments compared, the tables and figures, a node's folder.
import { Option, type Command } from 'commander';
import type { IO } from '../io.js';
import { setOption, type Registrar } from './options.js';

export function registerResultCommands(program: Command, { act }: Registrar, io: IO): void {
  program
    .command('diff')
    .description('parameters that differ, nodes they touch, metrics side by side')
    .argument('<a>')
    .argument('<b>')
    .option('--json', 'JSON output')
    .option('--md', 'Markdown output')
    .addOption(setOption().default([]))
    .action(
      act(async (a: string, b: string, o: { json?: boolean; md?: boolean; set: string[] }) =>
        (await import('../commands/diff.js')).diffCommand(
          a,
          b,
          { format: o.json ? 'json' : o.md ? 'md' : 'text', set: o.set },
          io,
        ),
      ),
    );

  // One output format at a time: commander refuses any two of these together.
  const formats = ['md', 'csv', 'json', 'html'];
  const format = (flag: string, help: string) =>
    new Option(`--${flag}`, help).conflicts(formats.filter((f) => f !== flag));
  program
    .command('report')
    .description("render the experiment's tables from node metrics")
    .argument('<file>')
    .addOption(setOption())
    .addOption(format('md', 'Markdown'))
    .addOption(format('csv', 'CSV: one table on stdout, or with --out DIR one NAME.csv per table'))
    .addOption(format('json', 'JSON: {"tables": {NAME: {"columns": [...], "rows": [...]}}}'))
    .addOption(format('html', 'one HTML page with tables, figures, curves and a trajectory browser (prints its path)'))
    .option('--table <name>', 'only this table')
    .option(
      '--out <dir>',
      'with --html: the folder of the page (default reports/<experiment>/html); with --csv: of the files',
    )
    .action(
      act(
        async (
          file: string,
          o: {
            set: string[];
            md?: boolean;
            csv?: boolean;
            json?: boolean;
            html?: boolean;
            out?: string;
            table?: string;
          },
        ) =>
          (await import('../commands/report.js')).reportCommand(
            file,
            {
              set: o.set,
              format: o.json ? 'json' : o.csv ? 'csv' : o.md ? 'md' : 'text',
              html: o.html,
              out: o.out,
              table: o.table,
            },
            io,
          ),
      ),
    );

  program
    .command('outputs')
    .description("print the cache folder with NODE's outputs")
    .argument('<file>')
    .argument('<node>')
    .addOption(setOption())
    .action(
      act(async (file: string, node: string, o: { set: string[] }) =>
        (await import('../commands/outputs.js')).outputsCommand(file, node, o, io),
      ),
    );
}
