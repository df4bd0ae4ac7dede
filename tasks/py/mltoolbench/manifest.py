"""The 115 instances (instances.tsv: id suffix, template, configuration, generation seed), 80 train, 25 ID, 10 OOD."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def instances():
    out = []
    with open(os.path.join(HERE, 'instances.tsv')) as fh:
        next(fh)
        for line in fh:
            if not line.strip():
                continue
            suffix, template, config, seed = line.rstrip('\n').split('\t')
            domain, split = suffix.rsplit('-', 2)[0], suffix.rsplit('-', 2)[1]
            out.append(
                {
                    'id': 'mltb-v1-' + suffix,
                    'template': template,
                    'config': config,
                    'seed': int(seed),
                    'split': split,
                    'domain': domain,
                }
            )
    return out
