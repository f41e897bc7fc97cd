"""Family 9xx: storage and platform versions (FSx for Lustre, EC2NodeClass AMI family and EBS)."""
