"""Kubernetes API groups eksmllint recognises objects by: one home for each (rules, graph, webhook)."""

KARPENTER_GROUP = "karpenter.sh"  # NodePool, NodeClaim
KARPENTER_AWS_GROUP = "karpenter.k8s.aws"  # EC2NodeClass
KUEUE_GROUP = "kueue.x-k8s.io"  # LocalQueue, ClusterQueue, ResourceFlavor
VOLCANO_JOB_GROUP = "batch.volcano.sh"  # Volcano Job
VOLCANO_SCHEDULING_GROUP = "scheduling.volcano.sh"  # Volcano Queue, PodGroup
COSCHEDULING_GROUP = "scheduling.x-k8s.io"  # scheduler-plugins PodGroup
