"""What eksmllint knows about the platform, as validated data with sources, in one home.

- :mod:`.versions` (``versions.yaml``): the releases of Karpenter, Kueue, KubeRay, the Neuron SDK and
  the training operators a run assumes (``platform:`` in the config).
- :mod:`.kinds` (``kinds.yaml``): the workload kinds: where their pod templates are, their pod
  counts, deadlines, gang fields and traits.
- :mod:`.derived`: the objects whose pods another object defines (a TrainJob's JobSet, merged from
  its runtime; a Katib trial).
- :mod:`.configs` (``configs.yaml``): the training config forms a launch line names (DeepSpeed,
  accelerate, Lightning, ``TrainingArguments``...), how each is recognised and where each fact is
  written; read by :mod:`eksmllint.analysis.configs`.
- Launchers: the program and option tables of :mod:`eksmllint.launch.programs` and
  :mod:`eksmllint.launch.options` are the registry of launchers (torchrun, deepspeed, accelerate,
  mpirun, srun, ``python -m`` modules) and their option grammars.
- :mod:`.provisioners` (``provisioners.yaml``): how nodes are provisioned (Karpenter, EKS Auto Mode,
  SageMaker HyperPod, managed node groups, Kueue ResourceFlavors), the labels each sets and the
  aliases of the instance catalogue's keys.

Code elsewhere reads these tables instead of keeping kind sets, label tables or launcher lists of
its own: a shape one module knows and another does not is a silent skip.
"""

from eksmllint.platform.versions import Component, Platform, components, parse_assignments, parse_version

__all__ = ["Component", "Platform", "components", "parse_assignments", "parse_version"]
